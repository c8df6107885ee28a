from deepresearch.app.cli import main

main()
