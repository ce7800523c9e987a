"""``lc-chat``, the chat-endpoint judge: its backend, transport, concurrent waves and the reading of
answer-choice probabilities."""
