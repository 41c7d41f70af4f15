"""nbgrader settings every Jupyter process on the course's hub reads (the hub puts this folder on
JUPYTER_CONFIG_PATH; on a hub of your own, copy this file to /etc/jupyter/): the course and its exchange.

The instructor's own settings are grading/nbgrader_config.py, read after this file in grading/."""
import os

c = get_config()  # noqa: F821 (provided by nbgrader's config loader)

c.CourseDirectory.course_id = "donegate"
c.Exchange.root = os.path.join(os.environ.get("COURSE_HUB", "/srv/donegate-hub"), "exchange")

# Where learners share one system account (one machine, no system accounts), nbgrader would name every submission
# after that account: name each learner by their hub name instead. In a container per learner (everyone "jovyan"),
# nbgrader does this by itself; with an account per learner, the hub name is the account's name anyway.
learner = os.environ.get("JUPYTERHUB_USER")
if learner:
    c.CourseDirectory.student_id = learner
