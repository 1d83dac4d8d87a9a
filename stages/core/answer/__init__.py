"""Stage answer (and vote): the readers (typed and free), the ensemble driver, answer normalisation,
voting and the submission table. The vote stage runs voting.py and submission.py from here.
"""
