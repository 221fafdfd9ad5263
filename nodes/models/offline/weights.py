"""The offline router's weights: how much each kind of evidence counts, and the least score of
an ask that hands over.

`KEYWORD_TERM`, `DESCRIPTION_TERM` and `PROMPT_TERM` weigh a profile's fields in the index
(`index.py`); the rest weigh a request's words in the scorer (`scorer.py`).
"""

from __future__ import annotations

# -- weights --------------------------------------------------------------------------------
KEYWORD_PHRASE = 3.0
"""Per word of a keyword phrase found verbatim in the request: the strongest evidence."""
KEYWORD_TERM = 2.0
"""A stem that is a keyword's word, times the keyword IDF and the word's share of its keyword
(1.0 for a one-word keyword, 0.5 for each content word of a two-word one)."""
DESCRIPTION_TERM = 1.5
"""A stem found in the profile's title or description, times the description IDF."""
PROMPT_TERM = 0.6
"""A stem found in the profile's prompt, times the prompt IDF."""
SYNONYM = 0.75
"""Factor for a match reached through `SYNONYMS` rather than through the word itself."""
TYPO = 0.6
"""Factor for an unknown word read as a profile's word one typo away (`loign` -> `login`)."""
CONTEXT = 0.5
"""Factor for the words of a decision sentence or a file name (they describe the situation)."""
THRESHOLD = 1.5
"""The least score of the ask that hands over: one keyword word, one word found in only one
description, a synonym of a one-word keyword, or weaker words together. Set from off-topic,
non-chit-chat text ("the weather is nice", "my manager says hello"), which scores at most 1.2
but for a sentence built on a bug word ("the coffee machine is broken again": 1.5)."""
MAX_TERMS = 3
"""How many request words to report when no keyword phrase matched (a topic uses three)."""

# -- example requests (`examples.py`) -------------------------------------------------------
EXAMPLE = 4.0
"""Factor for a request's closeness to a profile's example requests, added to its score."""
NEIGHBOURS = 12
"""How many nearest example documents vote for their profiles."""
GROUP_FEATURE = 0.5
"""A word's synonym group as a feature, relative to the word itself."""
PAIR_FEATURE = 0.5
"""A pair of neighbouring words as a feature, relative to one word."""
BALANCE = 0.5
"""How far a neighbour's vote is scaled by (mean documents per profile / its profile's
documents): 0 lets many examples outvote few, 1 weighs every profile's documents equally."""
NEAR_DUPLICATE = 0.6
"""A request this similar (cosine) to its nearest example, when that example is one the
orchestrator keeps, stays with the orchestrator whatever its words score."""
