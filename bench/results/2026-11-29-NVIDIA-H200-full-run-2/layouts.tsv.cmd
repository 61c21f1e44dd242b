layouts.tsv of this run is not kept; it is what this prints, from the
repository root:

    git show 255a6a3:bench/layouts.py | python3 - --tsv > layouts.tsv

(The file the run wrote named 0db9151: the machine's copy of the
repository's history was older than its working tree. bench/layouts.py is
the same at both commits.)
