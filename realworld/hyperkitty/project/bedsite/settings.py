"""Settings of the small Django project that hosts HyperKitty for luntan's test bed.

HyperKitty's own test settings (hyperkitty/tests/settings_test.py in the 1.3.12 wheel) cut to
what archives read by anonymous visitors need, on what every Django bed shares
(realworld/bedsettings.py: BED_WORK, the SQLite database, a Chinese interface in Beijing time).

No Mailman core: HyperKitty asks Mailman's REST API for a list's settings (name, description,
subject prefix, archive policy) only when told to (`hyperkitty_import` without
--no-sync-mailman, the archiver API, posting, subscriptions, the `mailman_sync` command); the
bed's lists are HyperKitty MailingList rows that fill.py creates itself, imported with
--no-sync-mailman. The REST API's URL points at a closed port on loopback, so a call that
slipped through fails at once instead of waiting.
"""
from bedsettings import *  # noqa: F401,F403
from bedsettings import DJANGO_APPS, DJANGO_CONTEXT, DJANGO_MIDDLEWARE, DJANGO_MORE_CONTEXT, WORK, django_templates

INSTALLED_APPS = DJANGO_APPS + [
    'hyperkitty',
    'django_mailman3',
    'django.contrib.sites',
    'django.contrib.humanize',
    'rest_framework',
    'django_gravatar',
    'compressor',
    'haystack',
    'django_extensions',
    'django_q',
    'allauth',
    'allauth.account',
    'allauth.socialaccount',
]
SITE_ID = 1

# bedsettings' Django middleware (no LocaleMiddleware: Chinese for every client), and
# allauth's, which its 65.x requires.
MIDDLEWARE = DJANGO_MIDDLEWARE + ['allauth.account.middleware.AccountMiddleware']

TEMPLATES = django_templates(DJANGO_CONTEXT + DJANGO_MORE_CONTEXT + [
    'django_mailman3.context_processors.common',
    'hyperkitty.context_processors.common',
])

AUTHENTICATION_BACKENDS = (
    'django.contrib.auth.backends.ModelBackend',
    'allauth.account.auth_backends.AuthenticationBackend',
)
LOGIN_URL = 'account_login'
LOGIN_REDIRECT_URL = 'hk_root'
LOGOUT_URL = 'account_logout'
ACCOUNT_LOGIN_METHODS = {'username', 'email'}
ACCOUNT_EMAIL_VERIFICATION = 'none'

# Mailman core (not run: see above).
MAILMAN_REST_API_URL = 'http://127.0.0.1:9'
MAILMAN_REST_API_USER = 'restadmin'
MAILMAN_REST_API_PASS = 'restpass'
MAILMAN_ARCHIVER_KEY = 'luntan-test-bed-not-secret'
MAILMAN_ARCHIVER_FROM = ('127.0.0.1', '::1')

# HyperKitty's stylesheets are SCSS that django-compressor compiles with sassc offline; the
# bed serves no static files (nothing needs them to read a page), so compression is off and
# the pages link the .scss and .js sources as they are (as HyperKitty's test settings do).
COMPRESS_ENABLED = False
COMPRESS_PRECOMPILERS = ()
STATICFILES_FINDERS = (
    'django.contrib.staticfiles.finders.FileSystemFinder',
    'django.contrib.staticfiles.finders.AppDirectoriesFinder',
    'compressor.finders.CompressorFinder',
)

# Full-text search: Whoosh in WORK (never indexed: search is not what the bed reads).
HAYSTACK_CONNECTIONS = {
    'default': {
        'ENGINE': 'haystack.backends.whoosh_backend.WhooshEngine',
        'PATH': str(WORK / 'fulltext_index'),
    },
}

# django-q's tasks (HyperKitty's cache rebuilds, Mailman syncs) run in the process that
# queues them, never in a cluster (none is started); an import in batch mode queues none.
Q_CLUSTER = {'retry': 60, 'timeout': 30, 'orm': 'default', 'sync': True, 'log_level': 'WARNING'}

CACHES = {'default': {'BACKEND': 'django.core.cache.backends.locmem.LocMemCache'}}
EMAIL_BACKEND = 'django.core.mail.backends.locmem.EmailBackend'

# HyperKitty
FILTER_VHOST = False
SHOW_INACTIVE_LISTS_DEFAULT = True  # the home page lists every list, however old its last post
HYPERKITTY_ENABLE_GRAVATAR = False  # no requests to gravatar.com in the pages' <img>
HYPERKITTY_ALLOW_WEB_POSTING = True
