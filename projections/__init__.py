"""Read models fed from the event store's notification log, one module per read model.

Each module holds a projection (its tables and its handlers) and the queries that read it.
``runner.py`` drives any of them: view rows and the tracking position commit together.
"""
