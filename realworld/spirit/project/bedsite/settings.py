"""Settings of the small Django project that hosts Spirit for luntan's test bed.

Spirit's own project template (spirit/extra/project_template/…/settings/base.py), cut to what
a forum read by anonymous visitors needs. Everything that changes between machines comes from
the environment: BED_WORK (the work directory: database, search index, media).
"""
import os
from pathlib import Path

WORK = Path(os.environ.get('BED_WORK', Path(__file__).resolve().parents[3] / 'work' / 'spirit'))

SECRET_KEY = 'luntan-test-bed-not-secret'
DEBUG = os.environ.get('BED_DEBUG') == '1'
ALLOWED_HOSTS = ['*']

INSTALLED_APPS = [
    'django.contrib.auth',
    'django.contrib.contenttypes',
    'django.contrib.sessions',
    'django.contrib.messages',
    'django.contrib.staticfiles',
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

# The template's list less LocaleMiddleware: the interface is Chinese whatever the
# client's Accept-Language says.
MIDDLEWARE = [
    'django.middleware.security.SecurityMiddleware',
    'django.contrib.sessions.middleware.SessionMiddleware',
    'django.middleware.common.CommonMiddleware',
    'django.middleware.csrf.CsrfViewMiddleware',
    'django.contrib.auth.middleware.AuthenticationMiddleware',
    'django.contrib.messages.middleware.MessageMiddleware',
    'django.middleware.clickjacking.XFrameOptionsMiddleware',
    'spirit.user.middleware.TimezoneMiddleware',
    'spirit.user.middleware.LastIPMiddleware',
    'spirit.user.middleware.LastSeenMiddleware',
    'spirit.user.middleware.ActiveUserMiddleware',
    'spirit.core.middleware.PrivateForumMiddleware',
    'djconfig.middleware.DjConfigMiddleware',
]

ROOT_URLCONF = 'bedsite.urls'
WSGI_APPLICATION = 'bedsite.wsgi.application'

TEMPLATES = [{
    'BACKEND': 'django.template.backends.django.DjangoTemplates',
    'DIRS': [],
    'APP_DIRS': True,
    'OPTIONS': {
        'context_processors': [
            'django.contrib.auth.context_processors.auth',
            'django.template.context_processors.debug',
            'django.template.context_processors.i18n',
            'django.template.context_processors.media',
            'django.template.context_processors.static',
            'django.template.context_processors.tz',
            'django.template.context_processors.request',
            'django.contrib.messages.context_processors.messages',
            'djconfig.context_processors.config',
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

# Chinese interface (Spirit ships zh_Hans), wall clock in Beijing time: anonymous visitors
# see times in TIME_ZONE (Spirit's TimezoneMiddleware activates a member's own zone only).
LANGUAGE_CODE = 'zh-hans'
TIME_ZONE = 'Asia/Shanghai'
USE_I18N = True
USE_TZ = True

STATIC_URL = '/static/'
STATIC_ROOT = str(WORK / 'static')
MEDIA_URL = '/media/'
MEDIA_ROOT = str(WORK / 'media')
STORAGES = {
    'default': {'BACKEND': 'spirit.core.storage.OverwriteFileSystemStorage'},
    'staticfiles': {'BACKEND': 'django.contrib.staticfiles.storage.StaticFilesStorage'},
}

# Spirit
ST_SITE_URL = 'http://127.0.0.1:18330/'
ST_UNICODE_SLUGS = True  # the default: Chinese titles give Chinese slugs
EMAIL_BACKEND = 'django.core.mail.backends.locmem.EmailBackend'

LOGGING = {
    'version': 1,
    'disable_existing_loggers': False,
    'handlers': {'console': {'class': 'logging.StreamHandler'}},
    'root': {'handlers': ['console'], 'level': 'WARNING'},
}
