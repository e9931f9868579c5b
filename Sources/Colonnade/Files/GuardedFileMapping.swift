#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A read-only, private mapping of a regular file that a truncation by someone else cannot turn
/// into a crash.
///
/// Reading a file through a mapping costs no copy and no fresh memory: the bytes are the page
/// cache's own pages. (Reading it into a buffer instead costs both; on a VM that returns freed
/// memory to its host, the first touch of 500 MB of fresh buffer took 0.41–0.47 s where mapping
/// and touching every page of the same warm file took 0.04–0.06 s.) The risk of a mapping is a
/// file that shrinks while it is read: a load past the new end raises SIGBUS, which would end
/// the process. So while a `GuardedFileMapping` lives, its range is registered with a SIGBUS
/// handler (installed on first use, chaining to whatever handler was there before): a fault on a
/// registered page replaces that page with a page of zeros (`MAP_FIXED` anonymous) and notes it
/// in `lostPages`, and the load that faulted is retried and reads zeros. The caller checks
/// `lostPages` after reading and reports the file as changed; any other SIGBUS goes to the
/// previous handler as before.
///
///     guard let mapping = GuardedFileMapping(fileDescriptor: fd, count: size) else { /* read it */ }
///     let result = decode(mapping.bytes)
///     if mapping.lostPages { /* the file shrank while being read: an error, not `result` */ }
///
/// Only Linux guards; elsewhere the initializer gives nil and callers read the file. The handler
/// is process-wide: a program embedding Colonnade that installs its own SIGBUS handler later
/// replaces it (then a file cut shorter meanwhile ends the process, as with any mapping), and
/// one installed earlier gets every SIGBUS outside a guarded range.
package final class GuardedFileMapping: @unchecked Sendable {
    // Safe to share: immutable after init; the mapping is read-only.

    /// The file's first `count` bytes.
    package let bytes: UnsafeRawBufferPointer
    private let slot: Int

    /// Maps the first `count` bytes of the regular file open at `fd` (which may be closed after).
    /// nil when `count` is 0, the file cannot be mapped, or every guard slot is in use: the caller
    /// reads the file instead.
    package init?(fileDescriptor fd: Int32, count: Int) {
        #if os(Linux)
        guard count > 0, let state = BusErrorGuard.state else { return nil }
        guard let p = mmap(nil, count, PROT_READ, MAP_PRIVATE, fd, 0), p != MAP_FAILED else { return nil }
        guard let slot = state.register(UnsafeRawPointer(p), count: count) else {
            munmap(p, count)
            return nil
        }
        self.bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(p), count: count)
        self.slot = slot
        #else
        return nil
        #endif
    }

    /// Whether a page was read past the file's end (the file shrank while mapped): those pages
    /// read as zeros, so whatever was decoded from them is not the file's.
    package var lostPages: Bool {
        #if os(Linux)
        BusErrorGuard.state?.lostPages(slot) ?? false
        #else
        false
        #endif
    }

    deinit {
        #if os(Linux)
        BusErrorGuard.state?.unregister(slot)
        munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count)
        #endif
    }
}

#if os(Linux)
/// The ranges `GuardedFileMapping`s have registered, and the SIGBUS handler that reads them.
///
/// The handler may run on any thread at any instruction, so it touches only memory allocated
/// once and never freed (`slots`: start, end and a lost-page flag per slot; 0 as start marks a
/// free slot), calls only `mmap` and `sigaction`, and keeps `errno`. Registering and
/// unregistering take a mutex the handler never takes; a range is registered before any of it
/// is read and unregistered after all of it is, so the handler never sees a range change while
/// a load of that range is faulting.
struct BusErrorGuard: @unchecked Sendable {
    // Safe: see above; `slots` and `previous` are written only under `lock` (slots) or once (previous).
    /// Mappings guarded at once (each loaded snapshot holds one while its table lives; a test
    /// process loads many at once); beyond that, callers map unguarded or read.
    static let slotCount = 256
    let slots: UnsafeMutablePointer<UInt>
    let previous: UnsafeMutablePointer<sigaction>
    let pageSize: UInt
    private let lock: UnsafeMutablePointer<pthread_mutex_t>

    /// The guard, its handler installed; nil when the handler could not be installed.
    static let state: BusErrorGuard? = BusErrorGuard()

    private init?() {
        slots = .allocate(capacity: 3 * Self.slotCount)
        slots.initialize(repeating: 0, count: 3 * Self.slotCount)
        previous = .allocate(capacity: 1)
        previous.initialize(to: sigaction())
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_mutex_t())
        pthread_mutex_init(lock, nil)
        pageSize = UInt(sysconf(Int32(_SC_PAGESIZE)))
        var action = sigaction()
        action.__sigaction_handler.sa_sigaction = handleBusError
        action.sa_flags = SA_SIGINFO | Int32(SA_ONSTACK)
        sigemptyset(&action.sa_mask)
        guard sigaction(SIGBUS, &action, previous) == 0 else { return nil }
    }

    /// A free slot now holding `[start, start + count)`, or nil when all are in use.
    func register(_ start: UnsafeRawPointer, count: Int) -> Int? {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        for k in 0 ..< Self.slotCount where slots[3 * k] == 0 {
            let base = UInt(bitPattern: start)
            slots[3 * k + 1] = base + UInt(count)
            slots[3 * k + 2] = 0
            slots[3 * k] = base
            return k
        }
        return nil
    }

    func unregister(_ k: Int) {
        pthread_mutex_lock(lock)
        slots[3 * k] = 0
        pthread_mutex_unlock(lock)
    }

    func lostPages(_ k: Int) -> Bool {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return slots[3 * k + 2] != 0
    }
}

/// SIGBUS: a guarded page past its file's end becomes a page of zeros; anything else goes to the
/// handler that was installed before (restored, so the fault, repeated on return, reaches it).
private func handleBusError(_ signal: Int32, _ info: UnsafeMutablePointer<siginfo_t>?, _ context: UnsafeMutableRawPointer?) {
    let savedErrno = errno
    defer { errno = savedErrno }
    guard let state = BusErrorGuard.state else { return }
    if let info {
        let address = UInt(bitPattern: info.pointee._sifields._sigfault.si_addr)
        for k in 0 ..< BusErrorGuard.slotCount {
            let start = state.slots[3 * k]
            guard start != 0, address >= start, address < state.slots[3 * k + 1] else { continue }
            let page = UnsafeMutableRawPointer(bitPattern: address & ~(state.pageSize - 1))
            if mmap(page, Int(state.pageSize), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED {
                state.slots[3 * k + 2] = 1
                return
            }
        }
    }
    sigaction(SIGBUS, state.previous, nil)
}
#endif
