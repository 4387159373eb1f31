from django.urls import include, path

import spirit.urls

urlpatterns = [
    path('', include(spirit.urls)),
]
