import ColonnadeCLI
#if canImport(Glibc)
import Glibc
#endif

exit(runColonnade(Array(CommandLine.arguments.dropFirst())))
