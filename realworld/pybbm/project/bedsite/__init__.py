# pybbm 0.19.0 (2017) calls inspect.getargspec, which Python 3.11 removed (its template tags
# call it at import, to register the permission filters). getfullargspec's first item is the
# same list of argument names, which is all pybbm reads of it.
import inspect

if not hasattr(inspect, 'getargspec'):
    inspect.getargspec = inspect.getfullargspec
