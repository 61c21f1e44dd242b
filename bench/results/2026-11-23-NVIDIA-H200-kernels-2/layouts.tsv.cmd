layouts.tsv of this run (1476 KiB of specs) is not kept in the repository:
it is exactly what this prints, from the repository root:

    git show 29429de:bench/layouts.py | python3 - --tsv > layouts.tsv
