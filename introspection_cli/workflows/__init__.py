"""What a command does end to end, minus the command line: core flows that tie the
run pipeline (:mod:`introspection_cli.evaluation`) to the reports
(:mod:`introspection_cli.reporting`)."""
