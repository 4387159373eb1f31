"""Settings of the small Django project that hosts django-machina for luntan's test bed:
what every Django bed shares (realworld/bedsettings.py: BED_WORK, the database, a Chinese
interface in Beijing time) and machina's apps, middleware, templates, caches and locale.
"""
from bedsettings import *  # noqa: F401,F403
from bedsettings import DJANGO_APPS, DJANGO_CONTEXT, DJANGO_MIDDLEWARE, WORK, django_templates
from machina import MACHINA_MAIN_STATIC_DIR, MACHINA_MAIN_TEMPLATE_DIR

INSTALLED_APPS = DJANGO_APPS + [
    'mptt',
    'haystack',
    'widget_tweaks',
    'machina',
    'machina.apps.forum',
    'machina.apps.forum_conversation',
    'machina.apps.forum_conversation.forum_attachments',
    'machina.apps.forum_conversation.forum_polls',
    'machina.apps.forum_feeds',
    'machina.apps.forum_moderation',
    'machina.apps.forum_search',
    'machina.apps.forum_tracking',
    'machina.apps.forum_member',
    'machina.apps.forum_permission',
]

MIDDLEWARE = DJANGO_MIDDLEWARE[:1] + ['whitenoise.middleware.WhiteNoiseMiddleware'] + DJANGO_MIDDLEWARE[1:] + [
    'machina.apps.forum_permission.middleware.ForumPermissionMiddleware',
]

TEMPLATES = django_templates(DJANGO_CONTEXT + ['machina.core.context_processors.metadata'], dirs=[MACHINA_MAIN_TEMPLATE_DIR])

CACHES = {
    'default': {'BACKEND': 'django.core.cache.backends.locmem.LocMemCache'},
    'machina_attachments': {
        'BACKEND': 'django.core.cache.backends.filebased.FileBasedCache',
        'LOCATION': str(WORK / 'cache' / 'machina_attachments'),
    },
}

HAYSTACK_CONNECTIONS = {
    'default': {'ENGINE': 'haystack.backends.simple_backend.SimpleEngine'},
}

# machina ships its Simplified Chinese catalogue as zh_CN, which Django 4 (zh-hans) does not
# look for; `bed.sh install` copies it to WORK/locale/zh_Hans.
LOCALE_PATHS = [str(WORK / 'locale')]

STATICFILES_DIRS = [MACHINA_MAIN_STATIC_DIR]

# machina
MACHINA_FORUM_NAME = '书友论坛'
MACHINA_USER_DISPLAY_NAME_METHOD = 'get_full_name'
