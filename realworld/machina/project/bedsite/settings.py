"""Settings of the small Django project that hosts django-machina for luntan's test bed.

Everything that changes between machines comes from the environment:
BED_WORK (the work directory: database, collected static files, media, locale).
"""
import os
from pathlib import Path

from machina import MACHINA_MAIN_STATIC_DIR, MACHINA_MAIN_TEMPLATE_DIR

WORK = Path(os.environ.get('BED_WORK', Path(__file__).resolve().parents[3] / 'work' / 'machina'))

SECRET_KEY = 'luntan-test-bed-not-secret'
DEBUG = os.environ.get('BED_DEBUG') == '1'
ALLOWED_HOSTS = ['*']

INSTALLED_APPS = [
    'django.contrib.auth',
    'django.contrib.contenttypes',
    'django.contrib.sessions',
    'django.contrib.messages',
    'django.contrib.staticfiles',
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

MIDDLEWARE = [
    'django.middleware.security.SecurityMiddleware',
    'whitenoise.middleware.WhiteNoiseMiddleware',
    'django.contrib.sessions.middleware.SessionMiddleware',
    'django.middleware.common.CommonMiddleware',
    'django.middleware.csrf.CsrfViewMiddleware',
    'django.contrib.auth.middleware.AuthenticationMiddleware',
    'django.contrib.messages.middleware.MessageMiddleware',
    'django.middleware.clickjacking.XFrameOptionsMiddleware',
    'machina.apps.forum_permission.middleware.ForumPermissionMiddleware',
]

ROOT_URLCONF = 'bedsite.urls'
WSGI_APPLICATION = 'bedsite.wsgi.application'

TEMPLATES = [{
    'BACKEND': 'django.template.backends.django.DjangoTemplates',
    'DIRS': [MACHINA_MAIN_TEMPLATE_DIR],
    'APP_DIRS': True,
    'OPTIONS': {
        'context_processors': [
            'django.template.context_processors.debug',
            'django.template.context_processors.request',
            'django.contrib.auth.context_processors.auth',
            'django.contrib.messages.context_processors.messages',
            'machina.core.context_processors.metadata',
        ],
    },
}]

DATABASES = {
    'default': {
        'ENGINE': 'django.db.backends.sqlite3',
        'NAME': str(WORK / 'db.sqlite3'),
    },
}
DEFAULT_AUTO_FIELD = 'django.db.models.AutoField'

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

# Chinese interface, wall clock in Beijing time.
LANGUAGE_CODE = 'zh-hans'
TIME_ZONE = 'Asia/Shanghai'
USE_I18N = True
USE_TZ = True
# machina ships its Simplified Chinese catalogue as zh_CN, which Django 4 (zh-hans) does not
# look for; `bed.sh install` copies it to WORK/locale/zh_Hans.
LOCALE_PATHS = [str(WORK / 'locale')]

STATIC_URL = '/static/'
STATIC_ROOT = str(WORK / 'static')
STATICFILES_DIRS = [MACHINA_MAIN_STATIC_DIR]
MEDIA_URL = '/media/'
MEDIA_ROOT = str(WORK / 'media')

# machina
MACHINA_FORUM_NAME = '书友论坛'
MACHINA_USER_DISPLAY_NAME_METHOD = 'get_full_name'

LOGGING = {
    'version': 1,
    'disable_existing_loggers': False,
    'handlers': {'console': {'class': 'logging.StreamHandler'}},
    'root': {'handlers': ['console'], 'level': 'WARNING'},
}
