#if canImport(Glibc)
import Glibc
#endif

/// Reading `readdir`'s entries safely.
enum DirectoryEntry {
    /// The name of the entry `readdir` returned, read in place.
    ///
    /// Never copy `entry.pointee` (as `withUnsafeBytes(of: entry.pointee.d_name)` does): glibc packs
    /// entries into its buffer at their real length (`d_reclen`), shorter than
    /// `MemoryLayout<dirent>.size` for short names, so copying the whole struct reads past the
    /// entry — and, for the last entry of a buffer that ends a page, past the mapping (SIGSEGV).
    /// The name is NUL-terminated within the entry.
    static func name(_ entry: UnsafePointer<dirent>) -> String {
        // Safe: `d_name` starts inside the entry and holds a NUL-terminated name (POSIX).
        let offset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 19
        return String(cString: (UnsafeRawPointer(entry) + offset).assumingMemoryBound(to: CChar.self))
    }
}
