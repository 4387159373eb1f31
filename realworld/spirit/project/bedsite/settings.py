"""Settings of the small Django project that hosts Spirit for luntan's test bed.

Spirit's own project template (spirit/extra/project_template/…/settings/base.py), cut to what
a forum read by anonymous visitors needs, on what every Django bed shares
(realworld/bedsettings.py: BED_WORK, the database, a Chinese interface in Beijing time).
"""
from bedsettings import *  # noqa: F401,F403
from bedsettings import DJANGO_APPS, DJANGO_CONTEXT, DJANGO_MIDDLEWARE, DJANGO_MORE_CONTEXT, WORK, django_templates

INSTALLED_APPS = DJANGO_APPS + [
    'django.contrib.humanize',
    'spirit.core',
    'spirit.admin',
    'spirit.search',
    'spirit.user',
    'spirit.user.admin',
    'spirit.user.auth',
    'spirit.category',
    'spirit.category.admin',
    'spirit.topic',
    'spirit.topic.admin',
    'spirit.topic.favorite',
    'spirit.topic.moderate',
    'spirit.topic.notification',
    'spirit.topic.private',
    'spirit.topic.unread',
    'spirit.comment',
    'spirit.comment.bookmark',
    'spirit.comment.flag',
    'spirit.comment.flag.admin',
    'spirit.comment.history',
    'spirit.comment.like',
    'spirit.comment.poll',
    'djconfig',
    'haystack',
]

# The template's list less LocaleMiddleware (DJANGO_MIDDLEWARE has none).
MIDDLEWARE = DJANGO_MIDDLEWARE + [
    'spirit.user.middleware.TimezoneMiddleware',
    'spirit.user.middleware.LastIPMiddleware',
    'spirit.user.middleware.LastSeenMiddleware',
    'spirit.user.middleware.ActiveUserMiddleware',
    'spirit.core.middleware.PrivateForumMiddleware',
    'djconfig.middleware.DjConfigMiddleware',
]

TEMPLATES = django_templates(DJANGO_CONTEXT + DJANGO_MORE_CONTEXT + ['djconfig.context_processors.config'])

# The template keeps both caches in the database; in memory here (the rate limit's cache
# must not expire: TIMEOUT None).
CACHES = {
    'default': {'BACKEND': 'django.core.cache.backends.locmem.LocMemCache'},
    'st_rate_limit': {
        'BACKEND': 'django.core.cache.backends.locmem.LocMemCache',
        'LOCATION': 'spirit_rl_cache',
        'TIMEOUT': None,
    },
}

AUTHENTICATION_BACKENDS = [
    'spirit.user.auth.backends.UsernameAuthBackend',
    'spirit.user.auth.backends.EmailAuthBackend',
]

HAYSTACK_CONNECTIONS = {
    'default': {
        'ENGINE': 'haystack.backends.whoosh_backend.WhooshEngine',
        'PATH': str(WORK / 'st_search'),
    },
}
HAYSTACK_SIGNAL_PROCESSOR = 'spirit.search.signals.RealtimeSignalProcessor'

LOGIN_URL = 'spirit:user:auth:login'
LOGIN_REDIRECT_URL = 'spirit:user:update'
LOGOUT_REDIRECT_URL = 'spirit:index'

STORAGES = {
    'default': {'BACKEND': 'spirit.core.storage.OverwriteFileSystemStorage'},
    'staticfiles': {'BACKEND': 'django.contrib.staticfiles.storage.StaticFilesStorage'},
}

# Spirit (its zh_Hans catalogue; anonymous visitors see times in TIME_ZONE: its
# TimezoneMiddleware activates a member's own zone only)
ST_SITE_URL = 'http://127.0.0.1:18330/'
ST_UNICODE_SLUGS = True  # the default: Chinese titles give Chinese slugs
EMAIL_BACKEND = 'django.core.mail.backends.locmem.EmailBackend'
