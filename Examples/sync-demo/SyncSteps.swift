import ExampleDocuments
import Foundation

/// Steps 3–5: a document edited on A reaches B; a change from A while B has unsaved edits becomes
/// a conflict version on both devices, resolved on A; the agent's status as `clouddocs` shows it.
/// The documents are `TextDocument`s open in this process (on the main actor, as in an app); each
/// device's `clouddocsd` moves the bytes and takes part in file coordination.
@MainActor
struct SyncSteps {
    let a: Device
    let b: Device
    let name = "notes.txt"

    func run() async throws {
        try await editTravels()
        try await unsavedEditsMakeAConflict()
        try agentStatus()
    }

    /// Step 3.
    private func editTravels() async throws {
        Narration.step(3, "A TextDocument is created on A, edited and saved: the agents carry it to B")
        let document = TextDocument(fileURL: a.file(name))
        document.text = "Shopping list\n- milk\n"
        try await document.saveThrowing(to: a.file(name), for: .forCreating)
        Narration.event("A saved \(name): \(Narration.quoted(document.text))")
        document.append("- bread\n")
        try await document.saveThrowing(to: a.file(name), for: .forOverwriting)
        Narration.event("A edited and saved: \(Narration.quoted(document.text))")
        await document.close()
        try await waitUntil(b, holds: document.text)
        Narration.event("B's \(name) on disk: \(Narration.quoted(text(b.file(name))))")
        try await showUploadState(of: b)
    }

    /// Step 4.
    private func unsavedEditsMakeAConflict() async throws {
        Narration.step(4, "B has unsaved edits while A changes the same line: B keeps its edits, then a conflict")
        let onB = TextDocument(fileURL: b.file(name))
        try await onB.openThrowing()
        _ = onB.replace("- milk\n", with: "- oat milk\n")
        Narration.event("B, unsaved: “- milk” → “- oat milk”")
        let onA = TextDocument(fileURL: a.file(name))
        try await onA.openThrowing()
        _ = onA.replace("- milk\n", with: "- whole milk\n")
        try await onA.saveThrowing(to: a.file(name), for: .forOverwriting)
        Narration.event("A saved: “- milk” → “- whole milk”")
        try await waitUntil(b, holds: onA.text)
        Narration.event("B's file now holds A's text; B's open document still shows \(Narration.quoted(onB.text)), unsaved: \(onB.hasUnsavedChanges)")
        try await onB.saveThrowing(to: b.file(name), for: .forOverwriting)
        Narration.event("B saved: the same line changed on both sides, so A's text was kept as a conflict version")
        await onB.close()
        try await waitUntil(a, holds: text(b.file(name)))
        for device in [b, a] {
            try await Waiting.until("\(device.name) lists a conflict version of \(name)", details: { device.details() }) {
                try device.checkAgent()
                return !(try ConflictVersions.list(device.file(name))).isEmpty
            }
            let versions = try ConflictVersions.list(device.file(name))
            Narration.event("on \(device.name): current \(Narration.quoted(text(device.file(name))))")
            Narration.quote(ConflictVersions.listing(versions, of: device.file(name)) { Narration.quoted(text($0.url)) })
        }
        await onA.close()
        // A coordinated write of the file: off the main actor, where open documents answer.
        let url = a.file(name)
        let resolution = try await Task.detached { try ConflictVersions.resolve(url, keeping: .current) }.value
        Narration.event("A: " + ConflictVersions.report(resolution, keeping: .current, of: url))
        try await Waiting.until("B has no unresolved conflict of \(name)", details: { b.details() }) {
            try b.checkAgent()
            return (try ConflictVersions.list(b.file(name))).isEmpty
        }
        Narration.event("B: no unresolved conflicts of \(name) left; B's text \(Narration.quoted(text(b.file(name))))")
    }

    /// Step 5.
    private func agentStatus() throws {
        Narration.step(5, "The agent's status on A (`clouddocs agent status`)")
        if let output = try BuiltTools.clouddocs(["agent", "status"], as: a) {
            Narration.quote(output)
        } else {
            let state = a.status.map { "\($0.state), \($0.queuedCount) queued, last sync \($0.lastSync.map { "\($0)" } ?? "never")" }
            Narration.event("A's agent: \(state ?? "no status") (build `clouddocs` to see its full report)")
        }
    }

    /// `clouddocs status FILE`-style: waits until `device`'s agent reports the file uploaded.
    private func showUploadState(of device: Device) async throws {
        let url = device.file(name)
        var report = ""
        try await Waiting.until("\(device.name)'s agent reports \(name) uploaded", details: { device.details() }) {
            try device.checkAgent()
            guard let output = try BuiltTools.clouddocs(["status", url.path], as: device) else {
                guard let status = device.status, case .idle = status.state, status.queuedCount == 0 else { return false }
                report = "agent idle, nothing queued: uploaded (build `clouddocs` to see `clouddocs status`)"
                return true
            }
            report = output
            return output.contains("uploaded: true")
        }
        Narration.event("`clouddocs status \(name)` on \(device.name):")
        Narration.quote(report)
    }

    private func waitUntil(_ device: Device, holds expected: String) async throws {
        let url = device.file(name)
        try await Waiting.until("\(name) on \(device.name) holds \(Narration.quoted(expected))", details: { a.details() + "\n" + b.details() }) {
            try a.checkAgent()
            try b.checkAgent()
            return text(url) == expected
        }
    }

    private func text(_ url: URL) -> String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }
}
