# Serve FlaskBB with waitress (a production WSGI server), DEBUG off.
import os
import sys

from waitress import serve

from flaskbb import create_app

work, port = os.path.abspath(sys.argv[1]), int(sys.argv[2])
app = create_app(os.path.join(work, "flaskbb.cfg"),
                 instance_path=os.path.join(work, "instance"))
serve(app, host="127.0.0.1", port=port, threads=4, ident="flaskbb")
