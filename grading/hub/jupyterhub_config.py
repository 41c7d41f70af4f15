"""A JupyterHub for the donegate course on one machine. Learners and the instructor log in with one shared
password; each gets JupyterLab with nbgrader's Assignments panel (fetch, validate, submit, fetch feedback), and
nbgrader's filesystem exchange in COURSE_HUB/exchange carries releases, submissions and feedback. From the course
checkout:

    mkdir -p /srv/donegate-hub/exchange
    COURSE_HUB=/srv/donegate-hub COURSE_HUB_PASSWORD='a long shared password' COURSE_HUB_USERS='ada bo instructor' \
        uv run jupyterhub -f grading/hub/jupyterhub_config.py

Every learner's server runs as the account that started the hub (SimpleLocalProcessSpawner: no system accounts),
in COURSE_HUB/home/<name>, and nbgrader names each submission by the learner's hub name (nbgrader_config.py beside
this file). That suits a workshop on one machine whose learners trust one another: they share one account, so each
can read the others' folders. For a course, keep the nbgrader parts and give each learner an account or a container
of their own (the README's "A course on JupyterHub").
"""
import os
import sys
from pathlib import Path

c = get_config()  # noqa: F821 (provided by JupyterHub's config loader)

HUB = Path(os.environ.get("COURSE_HUB", "/srv/donegate-hub")).resolve()
HERE = Path(__file__).resolve().parent
PYTHON = Path(sys.executable).parent  # the course's environment: JupyterLab, nbgrader and donegate

c.JupyterHub.ip = os.environ.get("COURSE_HUB_IP", "127.0.0.1")
c.JupyterHub.port = int(os.environ.get("COURSE_HUB_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ.get("COURSE_HUB_API_PORT", "8081"))
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{os.environ.get('COURSE_HUB_PROXY_PORT', '8001')}"
c.ConfigurableHTTPProxy.command = [os.environ.get("COURSE_HUB_PROXY", "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(HUB / "proxy.pid")
c.JupyterHub.db_url = f"sqlite:///{HUB / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(HUB / "jupyterhub_cookie_secret")

c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = os.environ["COURSE_HUB_PASSWORD"]  # at least 8 characters
users = set(os.environ.get("COURSE_HUB_USERS", "").split())
c.Authenticator.allowed_users = users
c.Authenticator.allow_all = not users  # no list: anyone who has the password

c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(HUB / "home" / "{username}")
c.Spawner.cmd = [str(PYTHON / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.args = ["--allow-root"] * (os.getuid() == 0)  # a container that runs as root: Jupyter refuses otherwise
c.Spawner.environment = {  # every learner's Jupyter reads nbgrader_config.py and labconfig/ beside this file
    "JUPYTER_CONFIG_PATH": str(HERE), "COURSE_HUB": str(HUB),
    "PATH": os.pathsep.join([str(PYTHON), os.environ.get("PATH", "")]),
}
