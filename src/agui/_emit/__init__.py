"""The emit core: how a run's events leave it, and the only code that knows queue records.

A handle or `ctx.emit` hands its construct to the run's pipeline (`pipeline`), which runs the
transformers, the verifier and the emit-time checks and queues what passed; the commonest
events wait in the queue as compact records (`record`) until a reader asks for events or a
transport for bytes. The ids a run mints are numbered here too (`numbering`). Nothing outside
this package builds or reads a record: public signatures speak events.
"""
