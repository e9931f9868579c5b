import DataLinkURLSession
#if canImport(Glibc)
import Glibc
#endif

// `colonnade-transfer`: the program `colonnade fetch` sends each API request from, one request
// per process (DataLink's `TransferProcess`): it reads the request (JSON) on standard input and
// writes the response as frames on standard output. Run by `fetch`, never by hand. It is the only
// executable that links FoundationNetworking (and with it libcurl), so `colonnade` starts
// without loading them (docs/ARCHITECTURE.md, *Modules*).
if isatty(0) != 0 || CommandLine.arguments.count > 1 {
    let text = "colonnade-transfer: internal to 'colonnade fetch', which runs it with a request on standard input; not run by hand\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(2)
}
exit(TransferProcessServer.serve(input: 0, output: 1))
