package no_tasks

// Plain is not annotated.
type Plain struct{}
