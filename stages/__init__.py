"""treerag: a DVC pipeline of small stages for citation-graded document QA."""
