# Installed into the venv as flaskbb_py311_compat.py and loaded by a .pth
# file: Python 3.10 removed the collections ABC aliases that FlaskBB 2.0.2
# (utils/settings.py: collections.MutableMapping) still uses.
import collections
import collections.abc

for _n in ("Mapping", "MutableMapping", "Sequence", "MutableSequence", "Set",
           "MutableSet", "Iterable", "Callable", "Hashable", "Sized",
           "Container"):
    if not hasattr(collections, _n):
        setattr(collections, _n, getattr(collections.abc, _n))
