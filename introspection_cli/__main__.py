from introspection_cli.cli.app import main

main()
