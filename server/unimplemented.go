package server

// Operations described in the API document but not built yet. Each answers 501 not_implemented
// (problem+json) until it is implemented in its own file; delete its stub here when it is.
// (None today: the campaign operations were the last.)
