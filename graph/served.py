"""The graph `langgraph dev` and LangGraph Server serve (named in langgraph.json).

The server loads this file by its path, outside the package, so it imports the
installed package by name. The graph has no checkpointer: the server supplies
its own. `HANDOVER_PROFILES` (a folder of profile files) adds the user's
specialists to the built-ins.
"""

import os

from specialist_handover.graph import build_graph

# chat UIs (Agent Chat UI, Studio) show message text only: each reply opens with its speaker
graph = build_graph(profiles=os.environ.get("HANDOVER_PROFILES") or None, label_replies=True)
graph.warm_up()  # what the first run would build (router indexes, tool schemas): now
