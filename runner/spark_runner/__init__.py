"""The Spark driver program of an interactive group instance: a Temporal worker serving
`executeJobInstance` on the group's task queue, one execution at a time. See runner/README.md."""
