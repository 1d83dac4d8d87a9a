"""Tools a person runs beside the pipeline (python -m stages.ask, python -m stages.compare); they may
import any package, and no stage imports them.
"""
