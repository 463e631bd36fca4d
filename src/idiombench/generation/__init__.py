"""Generation: backends behind one interface, a content-addressed cache, the generate stage."""
