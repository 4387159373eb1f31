"""Settings of the small Django project that hosts Askbot 0.13.0 for luntan's test bed.

Askbot's own project template (askbot/deployment/templates/settings_py.jinja2, what
`askbot-setup` writes), on what every Django bed shares (realworld/bedsettings.py: BED_WORK,
the SQLite database, Beijing wall-clock time). Askbot wants its own middleware, a Jinja2
template engine with its environment first, its apps and django.contrib.sites, and passes
a self-test at start (askbot/startup_procedures.py) that checks them.
"""
import os

import askbot
from jinja2.runtime import Undefined

from bedsettings import *  # noqa: F401,F403
from bedsettings import WORK

ASKBOT_ROOT = os.path.abspath(os.path.dirname(askbot.__file__))

# Askbot's catalogue is askbot/locale/zh_CN: Django looks a language up by its locale name
# (zh-hans → zh_Hans, then zh) and would not find it, leaving Askbot's words in English.
# zh-cn (locale zh_CN) is the language code that reaches it; Django's own strings fall back
# to its zh_Hans catalogue. Askbot in 'single-lang' mode: no language in the URLs.
LANGUAGE_CODE = 'zh-cn'
LANGUAGES = (('zh-cn', '简体中文'),)
ASKBOT_LANGUAGE_MODE = 'single-lang'

SITE_ID = 1
INTERNAL_IPS = ('127.0.0.1',)

MEDIA_ROOT = str(WORK / 'upfiles')
MEDIA_URL = '/upfiles/'
STATIC_URL = '/m/'  # Askbot's: must differ from MEDIA_URL
USE_LOCAL_FONTS = False
ADMIN_MEDIA_PREFIX = STATIC_URL + 'admin/'

ASKBOT_COMMON_CONTEXT_PREPROCESSORS = [
    'askbot.context.application_settings',
    'askbot.user_messages.context_processors.user_messages',  # must be before auth
    'django.contrib.messages.context_processors.messages',
    'django.contrib.auth.context_processors.auth',
]

TEMPLATES = (
    {
        'BACKEND': 'django.template.backends.jinja2.Jinja2',
        'APP_DIRS': True,
        'DIRS': [],
        'OPTIONS': {
            'environment': 'askbot.skins.jinja2_environment.factory',
            'autoescape': False,
            'undefined': Undefined,
            'context_processors': ASKBOT_COMMON_CONTEXT_PREPROCESSORS,
        },
    },
    {
        'BACKEND': 'django.template.backends.django.DjangoTemplates',
        'DIRS': [],
        'APP_DIRS': True,
        'OPTIONS': {
            'context_processors': ['django.template.context_processors.request']
            + ASKBOT_COMMON_CONTEXT_PREPROCESSORS,
        },
    },
)

# The template's list, in its order (Askbot's self-test checks it).
MIDDLEWARE = (
    'django.middleware.csrf.CsrfViewMiddleware',
    'django.contrib.sessions.middleware.SessionMiddleware',
    'django.contrib.messages.middleware.MessageMiddleware',
    'django.middleware.common.CommonMiddleware',
    'django.contrib.auth.middleware.AuthenticationMiddleware',
    'askbot.middleware.analytics_session.AnalyticsSessionMiddleware',
    'askbot.middleware.anon_user.ConnectToSessionMessagesMiddleware',
    'askbot.middleware.forum_mode.ForumModeMiddleware',
    'askbot.middleware.cancel.CancelActionMiddleware',
    'askbot.middleware.view_log.ViewLogMiddleware',
)

ATOMIC_REQUESTS = True
FILE_UPLOAD_TEMP_DIR = str(WORK / 'tmp')
FILE_UPLOAD_HANDLERS = (
    'django.core.files.uploadhandler.MemoryFileUploadHandler',
    'django.core.files.uploadhandler.TemporaryFileUploadHandler',
)
ASKBOT_ALLOWED_UPLOAD_FILE_TYPES = ('.jpg', '.jpeg', '.gif', '.bmp', '.png', '.tiff')
ASKBOT_MAX_UPLOAD_FILE_SIZE = 1024 * 1024

STORAGES = {
    'default': {'BACKEND': 'django.core.files.storage.FileSystemStorage'},
    'staticfiles': {'BACKEND': 'django.contrib.staticfiles.storage.StaticFilesStorage'},
}

INSTALLED_APPS = (
    'askbot',
    'askbot.deps.django_authopenid',
    'django.contrib.admin',
    'django.contrib.auth',
    'django.contrib.contenttypes',
    'django.contrib.humanize',
    'django.contrib.messages',
    'django.contrib.sessions',
    'django.contrib.sitemaps',
    'django.contrib.sites',
    'django.contrib.staticfiles',
    'avatar',
    'django_recaptcha',
    'compressor',
    'django_jinja',
    'django_countries',
    'followit',
    'keyedcache',
    'kombu.transport.memory',
    'livesettings',
)

# The template's locmem cache (per gunicorn worker; nothing is written while luntan reads).
CACHES = {
    'default': {
        'BACKEND': 'django.core.cache.backends.locmem.LocMemCache',
        'LOCATION': 'askbot',
        'KEY_PREFIX': 'askbot',
        'TIMEOUT': 6000,
    },
}
LIVESETTINGS_CACHE_TIMEOUT = CACHES['default']['TIMEOUT']
CACHE_MIDDLEWARE_ANONYMOUS_ONLY = True
CACHE_MIDDLEWARE_SECONDS = 600

AUTHENTICATION_BACKENDS = (
    'django.contrib.auth.backends.ModelBackend',
    'askbot.deps.django_authopenid.backends.AuthBackend',
)

ASKBOT_URL = ''
ASKBOT_TRANSLATE_URL = True
LOGIN_REDIRECT_URL = ASKBOT_URL
ALLOW_UNICODE_SLUGS = False  # the template's: Askbot's slugs are Unidecode's pinyin
ASKBOT_USE_STACKEXCHANGE_URLS = False

# Celery's tasks (notifications, mail) run where they are called: no worker, no broker.
CELERY_BROKER_TRANSPORT = 'kombu.transport.memory.Transport'
CELERY_TASK_ALWAYS_EAGER = True

CSRF_COOKIE_NAME = '_csrf'
STATICFILES_DIRS = (('default/media', os.path.join(ASKBOT_ROOT, 'media')),)
STATICFILES_FINDERS = (
    'django.contrib.staticfiles.finders.FileSystemFinder',
    'django.contrib.staticfiles.finders.AppDirectoriesFinder',
    'compressor.finders.CompressorFinder',
)
NOCAPTCHA = True
ENABLE_HAYSTACK_SEARCH = False
NOTIFICATION_DELAY_TIME = 60 * 5
ASKBOT_CSS_DEVEL = False
COMPRESS_FILTERS = {
    'css': ['compressor.filters.css_default.CssAbsoluteFilter', 'compressor.filters.cssmin.rCSSMinFilter'],
    'js': [],
}
COMPRESS_PARSER = 'compressor.parser.HtmlParser'
COMPRESS_ENABLED = False
JINJA2_EXTENSIONS = ('compressor.contrib.jinja2ext.CompressorExtension',)
JINJA2_TEMPLATES = ('django_recaptcha',)
VERIFIER_EXPIRE_DAYS = 3
AVATAR_AUTO_GENERATE_SIZES = (16, 32, 48, 128)
AVATAR_THUMB_FORMAT = 'PNG'
SESSION_SERIALIZER = 'django.contrib.sessions.serializers.JSONSerializer'
SILENCED_SYSTEM_CHECKS = ['django_recaptcha.recaptcha_test_key_error']

# Mail to memory; no rate limit on a crawler reading the bed on loopback (django-ratelimit
# off; the fill turns Askbot's own rate-limit livesettings off too, so the two agree).
EMAIL_BACKEND = 'django.core.mail.backends.locmem.EmailBackend'
DEFAULT_FROM_EMAIL = 'askbot@example.org'
RATELIMIT_ENABLE = False
