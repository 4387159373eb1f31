"""Settings of the small Django project that hosts pybbm for luntan's test bed.

pybbm's own test project (test/test_project in its repository), cut to what a forum read by
anonymous visitors needs, on what every Django bed shares (realworld/bedsettings.py: BED_WORK,
the database, a Chinese interface in Beijing time).
"""
from pathlib import Path

from bedsettings import *  # noqa: F401,F403
from bedsettings import DJANGO_APPS, DJANGO_CONTEXT, DJANGO_MIDDLEWARE, django_templates

HERE = Path(__file__).resolve().parent

INSTALLED_APPS = DJANGO_APPS + [
    'django.contrib.sites',  # pybbm's mail to subscribers names the site
    'pybb',
]

# PybbMiddleware switches a member to the profile's language.
MIDDLEWARE = DJANGO_MIDDLEWARE + ['pybb.middleware.PybbMiddleware']

SITE_ID = 1

TEMPLATES = django_templates(
    DJANGO_CONTEXT
    + ['django.template.context_processors.i18n', 'django.template.context_processors.static', 'pybb.context_processors.processor'],
    dirs=[HERE.parent / 'templates'],
)

CACHES = {'default': {'BACKEND': 'django.core.cache.backends.locmem.LocMemCache'}}

# Chinese interface: Django's zh_Hans catalogue, and pybbm's own "zh" one (gettext falls back
# from zh_Hans to zh). Beijing wall clock: pybbm's pybb_time formats the stored datetime as it
# is, never moving it to a zone, so with USE_TZ (UTC in the database) the pages would show UTC;
# without it, datetimes are stored and shown on TIME_ZONE's clock, as pybbm's test project has it.
USE_TZ = False

LOGIN_URL = 'auth_login'
EMAIL_BACKEND = 'django.core.mail.backends.locmem.EmailBackend'

# pybbm: its defaults (BBCode markup, 10 posts a topic page) but the forum's title and 10
# topics a forum page instead of 20, so that the larger forums have a pager.
PYBB_DEFAULT_TITLE = '书友茶馆'
PYBB_FORUM_PAGE_SIZE = 10
