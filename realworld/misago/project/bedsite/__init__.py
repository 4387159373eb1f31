# Misago's tasks (notifications, avatars) are Celery shared tasks: the bed's Celery app runs them
# in the calling process (CELERY_TASK_ALWAYS_EAGER), no broker and no worker.
from .celery import app as celery_app

__all__ = ['celery_app']
