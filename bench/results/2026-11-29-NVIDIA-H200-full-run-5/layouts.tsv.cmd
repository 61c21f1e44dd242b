layouts.tsv of this run is not kept; it is what this prints, from the
repository root:

    git show 497f0e3:bench/layouts.py | python3 - --tsv > layouts.tsv
