extension EmulatedVendor {
    /// The standard figures (``standardMetrics(into:)``).
    package func metrics(into samples: inout [EmulatorMetricSample]) {
        standardMetrics(into: &samples)
    }

    /// The figures every emulator has, built from what the kit knows of it: per room of its
    /// ``EmulatorStatusSource/emulatorStatus()``, users waiting and inside, admitted and the
    /// admission rate (labels `vendor`, `scope`, `room`); keys never returned (when its passes
    /// hold keys) and keys it returned itself (when its status counters name `keysAutoReturned`),
    /// faults injected and pending (label `vendor`); requests per kind (`kind`) and replies per
    /// result (`code`) as its ``loadFigures()`` name them.
    package func standardMetrics(into samples: inout [EmulatorMetricSample]) {
        let status = emulatorStatus()
        let vendor = ["vendor": vendorID]
        for room in status.rooms {
            let labels = ["vendor": vendorID, "scope": room.key.scope, "room": room.key.room]
            samples.append(EmulatorMetricSample(.usersWaiting, labels: labels, value: Double(room.waiting)))
            if let inside = room.inside {
                samples.append(EmulatorMetricSample(.usersInside, labels: labels, value: Double(inside)))
            }
            samples.append(EmulatorMetricSample(.admittedTotal, labels: labels, value: Double(room.admittedTotal)))
            samples.append(EmulatorMetricSample(.admissionRate, labels: labels, value: room.rate))
        }
        if let keys = status.keysNeverReturned {
            samples.append(EmulatorMetricSample(.keysNeverReturned, labels: vendor, value: Double(keys)))
        }
        if let autoReturned = status.counters["keysAutoReturned"] {
            samples.append(EmulatorMetricSample(.keysAutoReturned, labels: vendor, value: autoReturned))
        }
        samples.append(EmulatorMetricSample(.faultsInjected, labels: vendor, value: Double(status.faultsInjected)))
        samples.append(EmulatorMetricSample(.faultsPending, labels: vendor, value: Double(status.faultsPending)))
        let figures = loadFigures()
        for (kind, count) in figures.requests {
            samples.append(EmulatorMetricSample(.requests, labels: ["vendor": vendorID, "kind": kind], value: Double(count)))
        }
        for (code, count) in figures.replies {
            samples.append(EmulatorMetricSample(.replies, labels: ["vendor": vendorID, "code": code], value: Double(count)))
        }
    }
}
