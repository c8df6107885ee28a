"""The closed loop, one round at a time (loop.py): questions (questions.py, replay.py) → rollout groups in a
served corpus (rollout.py, environment.py) → rewards and advantages (scoring.py, rewards.py, information.py,
judge.py) → the update (../update/) → the eval gate and publishing (../adapters/). schedule.py says which
rounds run and when; checkpoint.py lets a stopped training continue.
"""
