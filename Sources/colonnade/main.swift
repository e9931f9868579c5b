import ColonnadeCLI
#if canImport(Glibc)
import Glibc

// A command runs once and exits: glibc's heap keeps what is freed (up to 256 MiB at its top, and
// blocks under 32 MiB come from the heap, not from mappings of their own) instead of giving it
// back to the kernel after each piece of work. Given back, the next allocation's pages are
// faulted in and zeroed again; on a VM that returns freed memory to its host, each first touch
// also faults on the host. `colonnade import` of the medium zip (558 MB of CSV): 18,700 page
// faults instead of 36,700–58,900, system time 0.55–0.77 s instead of 0.82–1.81 s.
_ = glibcMallopt(-1 /* M_TRIM_THRESHOLD */, 256 << 20)
_ = glibcMallopt(-3 /* M_MMAP_THRESHOLD */, 32 << 20)

/// glibc's `mallopt(3)` (malloc.h), which the Glibc module does not import.
@_silgen_name("mallopt")
func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
#endif

exit(runColonnade(Array(CommandLine.arguments.dropFirst())))
