/* The one Swift runtime entry point TetherCore calls directly (see WeakRef.swift).
 * Exported by the runtime on every platform; declared here because Swift code
 * may not name runtime symbols itself. */

/* Retains `object` (a Swift heap object) and returns it, unless its strong count
 * already reached zero (it is being destroyed): then returns NULL. (Runtimes
 * before Swift 5.9 returned a bool; this is the signature of the toolchain the
 * build requires, checked by WeakRefTests.) */
void *swift_tryRetain(void *object);
