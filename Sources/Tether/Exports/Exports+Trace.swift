import TetherCore

/// tether_trace_event, as tether.h lays it out.
struct CTraceEvent {
    var kind: Int32
    var status: Int32
    var key: UnsafePointer<CChar>?
    var instance: UnsafeMutableRawPointer?
    var target: UnsafeMutableRawPointer?
    var targetKey: UnsafePointer<CChar>?
}

public typealias CTraceFn = @convention(c) (UnsafeRawPointer?, UnsafeMutableRawPointer?) -> Void

@_cdecl("tether_set_trace")
public func tether_set_trace(_ c: OpaquePointer?, _ fn: CTraceFn?, _ context: UnsafeMutableRawPointer?) -> Int32 {
    abiCall { () throws(TetherError) in
        let core = try Handles.containers.get(c, "tether_set_trace")
        guard let fn else { return core.setTrace(nil) }
        nonisolated(unsafe) let context = context
        core.setTrace { event in
            var e = CTraceEvent(kind: event.kind.rawValue, status: event.status?.rawValue ?? 0,
                                key: KeyTable.shared.cName(of: event.key), instance: event.instance, target: event.target,
                                targetKey: event.targetKey.flatMap { KeyTable.shared.cName(of: $0) })
            withUnsafePointer(to: &e) { fn(UnsafeRawPointer($0), context) }
        }
    }
}
