import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How HTTP statuses and URLSession failures become ``RemoteStoreError`` values.
enum WebDAVStatus {
    /// The error for a status an operation did not expect: 404/410 and 409 (missing parent) are
    /// ``RemoteStoreError/notFound(_:)``, 412 ``RemoteStoreError/preconditionFailed(_:)``, 401/403
    /// ``RemoteStoreError/unauthorized(status:)``, 429, 423 and 5xx
    /// ``RemoteStoreError/unavailable(status:retryAfter:)`` (with `Retry-After`), anything else
    /// ``RemoteStoreError/unexpectedStatus(_:method:path:)``.
    static func error(for response: WebDAVResponse, method: String, path: RemotePath) -> RemoteStoreError {
        switch response.status {
        case 404, 409, 410: .notFound(path)
        case 412: .preconditionFailed(path)
        case 401, 403: .unauthorized(status: response.status)
        case 423, 429, 500...599:
            .unavailable(status: response.status, retryAfter: response.header("retry-after").flatMap { retryAfter(parsing: $0) })
        default: .unexpectedStatus(response.status, method: method, path: path)
        }
    }

    /// A `Retry-After` value in seconds from now: delta-seconds (`120`) or an HTTP date (clamped at
    /// 0 when in the past); `nil` when unreadable.
    static func retryAfter(parsing value: String, now: Date = Date()) -> Double? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Double(text), seconds.isFinite, seconds >= 0 { return seconds }
        guard let date = WebDAVDates.parse(text) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// The error for a failed URLSession task.
    static func error(for failure: any Error) -> RemoteStoreError {
        if let urlError = failure as? URLError {
            switch urlError.code {
            case .timedOut: return .timedOut
            case .cancelled: return .cancelled
            default: return .transport(urlError.localizedDescription + " (URLError \(urlError.code.rawValue))")
            }
        }
        let nsError = failure as NSError
        if nsError.domain == NSURLErrorDomain {
            if nsError.code == NSURLErrorTimedOut { return .timedOut }
            if nsError.code == NSURLErrorCancelled { return .cancelled }
        }
        return .transport("\(nsError.localizedDescription) (\(nsError.domain) \(nsError.code))")
    }
}

/// The HTTP dates WebDAV servers send (`getlastmodified`, `Retry-After`): RFC 1123
/// (`Fri, 27 Nov 2026 18:05:58 GMT`), read without a formatter (a listing has thousands of them;
/// `DateFormatter` is slow to make and not thread-safe), with the RFC 850 and asctime forms read
/// by a formatter.
enum WebDAVDates {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The date, or `nil` when `text` is none of the forms.
    static func parse(_ text: String) -> Date? {
        if let date = parseRFC1123(text) { return date }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }

    /// `Fri, 27 Nov 2026 18:05:58 GMT`.
    static func parseRFC1123(_ text: String) -> Date? {
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[5] == "GMT" || fields[5] == "UTC",
              let day = Int(fields[1]), (1...31).contains(day),
              let month = months.firstIndex(of: fields[2].lowercased()),
              let year = Int(fields[3]), (1970...9999).contains(year) else { return nil }
        let clock = fields[4].split(separator: ":")
        guard clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second) else { return nil }
        // Days from 1970-01-01 to the civil date (Howard Hinnant's days_from_civil).
        let y = month < 2 ? year - 1 : year
        let era = y / 400
        let yearOfEra = y - era * 400
        let monthFromMarch = (month + 10) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }
}
