"""The protocol's machinery below the public models: what the wire is made of, and its rules.

The base of every wire model (`model`), the ordering rules the verifier names (`rules`), JSON
values and text checked as AG-UI carries them (`json_value`, `json_text`, `text`), the nulls
the wire reads as absent (`nulls`), and what a client does with a stream: chunk events expanded
lane by lane (`chunk_lanes`) and the message thread a fold holds (`message_thread`). Each
module sits in the layer of its users (see the layer map in `agui`).
"""
