/// A query stopped by the user (Ctrl-C in `colonnade shell`) before it finished.
struct QueryCancelled: Error, Equatable {}
