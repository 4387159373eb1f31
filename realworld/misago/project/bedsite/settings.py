"""Settings of the small Django project that hosts Misago for luntan's test bed.

Misago's own development project (devproject/settings.py in its repository, tag 0.39.6), cut to
what a forum read by anonymous visitors needs, on what every Django bed shares
(realworld/bedsettings.py: BED_WORK, a Chinese interface in Beijing time). Misago runs on
PostgreSQL only: the machine's server on 127.0.0.1:5432, a database of the bed's own
(misago_bed, dropped and created by `bed.sh fill`).
"""
import os

from bedsettings import *  # noqa: F401,F403
from bedsettings import DJANGO_MIDDLEWARE, WORK, django_templates
import misago.settings as misago_defaults

# Misago's apps (Django's own among them, in its order), its template context processors and
# the other names its settings.py exports.
INSTALLED_APPS = misago_defaults.INSTALLED_APPS
INSTALLED_PLUGINS = misago_defaults.INSTALLED_PLUGINS
MISAGO_NOTIFICATIONS_RETRY_DELAY = misago_defaults.MISAGO_NOTIFICATIONS_RETRY_DELAY

DATABASES = {
    'default': {
        'ENGINE': 'django.db.backends.postgresql',
        'NAME': os.environ.get('BED_PGDATABASE', 'misago_bed'),
        'USER': 'postgres',
        'HOST': '127.0.0.1',
        'PORT': 5432,
    },
}

# In memory, as devproject has it: Misago versions its cached settings, ACLs and categories in
# the database (misago.cache's CacheVersion), which each gunicorn worker's cache follows.
CACHES = {'default': {'BACKEND': 'django.core.cache.backends.locmem.LocMemCache'}}

AUTH_USER_MODEL = 'misago_users.User'
AUTHENTICATION_BACKENDS = ['misago.users.authbackends.MisagoBackend']
CSRF_FAILURE_VIEW = 'misago.core.errorpages.csrf_failure'
LOGIN_REDIRECT_URL = 'misago:index'
LOGIN_URL = 'misago:login'
LOGOUT_URL = 'misago:logout'

# devproject's list less the debug toolbar's (no LocaleMiddleware in either: every client gets
# the Chinese interface).
MIDDLEWARE = [
    'misago.users.middleware.RealIPMiddleware',
    'misago.core.middleware.FrontendContextMiddleware',
] + DJANGO_MIDDLEWARE + [
    'misago.cache.middleware.cache_versions_middleware',
    'misago.conf.middleware.dynamic_settings_middleware',
    'misago.socialauth.middleware.socialauth_providers_middleware',
    'misago.users.middleware.UserMiddleware',
    'misago.acl.middleware.user_acl_middleware',
    'misago.core.middleware.ExceptionHandlerMiddleware',
    'misago.users.middleware.OnlineTrackerMiddleware',
    'misago.admin.middleware.AdminAuthMiddleware',
    'misago.threads.middleware.UnreadThreadsCountMiddleware',
]

TEMPLATES = django_templates(misago_defaults.TEMPLATE_CONTEXT_PROCESSORS)

SOCIAL_AUTH_STRATEGY = 'misago.socialauth.strategy.MisagoStrategy'
SOCIAL_AUTH_JSONFIELD_ENABLED = True

REST_FRAMEWORK = {
    'DEFAULT_PERMISSION_CLASSES': ['misago.core.rest_permissions.IsAuthenticatedOrReadOnly'],
    'DEFAULT_RENDERER_CLASSES': ['rest_framework.renderers.JSONRenderer'],
    'EXCEPTION_HANDLER': 'misago.core.exceptionhandler.handle_api_exception',
    'UNAUTHENTICATED_USER': 'misago.users.models.AnonymousUser',
    'URL_FORMAT_OVERRIDE': None,
}

# Misago's tasks run where they are called (bedsite/celery.py): no broker, no worker.
CELERY_TASK_ALWAYS_EAGER = True
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_BROKER_URL = 'memory://localhost/'

EMAIL_BACKEND = 'django.core.mail.backends.locmem.EmailBackend'

# The debug toolbar is one of Misago's apps; its middleware is not wanted.
SILENCED_SYSTEM_CHECKS = ['debug_toolbar.W001']

MISAGO_AVATARS_SIZES = [400, 200, 100]
MISAGO_SEARCH_CONFIG = 'simple'
MISAGO_USER_DATA_DOWNLOADS_WORKING_DIR = str(WORK / 'userdata')
