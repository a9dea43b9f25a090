import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// One `<response>` of a PROPFIND answer (`207 Multi-Status`), as the server wrote it: only the
/// properties of `propstat`s whose status is 200 are kept (Apache reports a collection's missing
/// `getcontentlength` in a 404 `propstat`).
struct WebDAVResponseEntry: Sendable, Equatable {
    var href: String
    var isCollection = false
    var etag: String?
    var contentLength: String?
    var lastModified: String?
    var fileID: String?
}

/// Reads a `207 Multi-Status` body with `XMLParser`, namespace-aware: the `DAV:` elements
/// (`response`, `href`, `propstat`, `status`, `resourcetype`/`collection`, `getetag`,
/// `getcontentlength`, `getlastmodified`) and `oc:fileid` (`http://owncloud.org/ns`). Elements of
/// other namespaces are ignored. External entities are not resolved.
enum WebDAVMultistatus {
    static let davNamespace = "DAV:"
    static let ownCloudNamespace = "http://owncloud.org/ns"

    /// The PROPFIND request body asking for the properties above.
    static let requestBody = Data("""
        <?xml version="1.0" encoding="utf-8"?>
        <d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>\
        <d:resourcetype/><d:getetag/><d:getcontentlength/><d:getlastmodified/><oc:fileid/>\
        </d:prop></d:propfind>
        """.utf8)

    /// The same without `oc:fileid`, for a server the probe found gives none (Apache, WsgiDAV):
    /// such a server answers every item with a "404 Not Found" block for it, a quarter of the
    /// answer, read and digested at every poll for nothing.
    static let requestBodyWithoutFileIDs = Data("""
        <?xml version="1.0" encoding="utf-8"?>
        <d:propfind xmlns:d="DAV:"><d:prop>\
        <d:resourcetype/><d:getetag/><d:getcontentlength/><d:getlastmodified/>\
        </d:prop></d:propfind>
        """.utf8)

    /// The responses of `body`; throws ``RemoteStoreError/malformedResponse(_:)`` when it is not
    /// well-formed XML or not a `DAV:multistatus`.
    static func parse(_ body: Data) throws(RemoteStoreError) -> [WebDAVResponseEntry] {
        let parser = XMLParser(data: body)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        let reader = MultistatusReader()
        parser.delegate = reader
        let parsed = parser.parse()
        if let problem = reader.problem { throw .malformedResponse(problem) }
        guard parsed else {
            let reason = parser.parserError.map { "\($0.localizedDescription)" } ?? "parse failed"
            throw .malformedResponse("PROPFIND answer is not well-formed XML (\(reason))")
        }
        guard reader.sawMultistatus else { throw .malformedResponse("PROPFIND answer is not a DAV:multistatus") }
        return reader.entries
    }

    /// `text` without leading and trailing XML white space (space, tab, CR, LF), in Swift (no
    /// `NSString` bridge: a listing has tens of thousands of values).
    static func trimmed(_ text: String) -> String {
        let isSpace = { (byte: UInt8) in byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
        let bytes = text.utf8
        guard let first = bytes.firstIndex(where: { !isSpace($0) }), let last = bytes.lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        if first == bytes.startIndex && last == bytes.index(before: bytes.endIndex) { return text }
        // Only ASCII bytes were cut, so the rest is whole UTF-8.
        return String(decoding: bytes[first...last], as: UTF8.self)
    }

    /// Whether a `<status>` line (`HTTP/1.1 200 OK`) says 2xx.
    static func isSuccess(statusLine: String) -> Bool {
        let fields = statusLine.split(separator: " ")
        guard fields.count >= 2, let code = Int(fields[1]) else { return false }
        return (200..<300).contains(code)
    }
}

/// The `XMLParser` delegate of ``WebDAVMultistatus/parse(_:)``. Used by one parse on one thread
/// (`XMLParser.parse()` calls back synchronously on the calling thread).
private final class MultistatusReader: NSObject, XMLParserDelegate {
    var entries: [WebDAVResponseEntry] = []
    var sawMultistatus = false
    var problem: String?

    private var path: [(namespace: String, name: String)] = []
    private var text = ""
    private var currentResponse: WebDAVResponseEntry?
    private var propstatProperties = WebDAVResponseEntry(href: "")
    private var propstatStatus: String?
    private var propstatCollection = false
    /// The most characters a single text value may have (an `href` or a tag): more is hostile.
    private static let maximumTextLength = 64 * 1024

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]) {
        let namespace = namespaceURI ?? ""
        path.append((namespace, elementName))
        text = ""
        guard namespace == WebDAVMultistatus.davNamespace else { return }
        switch elementName {
        case "multistatus": sawMultistatus = true
        case "response": currentResponse = WebDAVResponseEntry(href: "")
        case "propstat":
            propstatProperties = WebDAVResponseEntry(href: "")
            propstatStatus = nil
            propstatCollection = false
        case "collection" where isInside("resourcetype"): propstatCollection = true
        default: break
        }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        guard text.utf8.count + string.utf8.count <= Self.maximumTextLength else {
            problem = "a value in the PROPFIND answer is longer than \(Self.maximumTextLength) bytes"
            parser.abortParsing()
            return
        }
        text += string
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName qName: String?) {
        defer { if !path.isEmpty { path.removeLast() } }
        let namespace = namespaceURI ?? ""
        let value = WebDAVMultistatus.trimmed(text)
        text = ""
        if namespace == WebDAVMultistatus.ownCloudNamespace, elementName == "fileid", isInside("prop") {
            propstatProperties.fileID = value.isEmpty ? nil : value
            return
        }
        guard namespace == WebDAVMultistatus.davNamespace else { return }
        switch elementName {
        case "href" where path.count >= 2 && path[path.count - 2] == (WebDAVMultistatus.davNamespace, "response"):
            currentResponse?.href = value
        case "status" where isInside("propstat"): propstatStatus = value
        case "getetag" where isInside("prop"): propstatProperties.etag = value.isEmpty ? nil : value
        case "getcontentlength" where isInside("prop"): propstatProperties.contentLength = value.isEmpty ? nil : value
        case "getlastmodified" where isInside("prop"): propstatProperties.lastModified = value.isEmpty ? nil : value
        case "propstat":
            guard var response = currentResponse, let status = propstatStatus,
                  WebDAVMultistatus.isSuccess(statusLine: status) else { return }
            response.isCollection = response.isCollection || propstatCollection
            response.etag = propstatProperties.etag ?? response.etag
            response.contentLength = propstatProperties.contentLength ?? response.contentLength
            response.lastModified = propstatProperties.lastModified ?? response.lastModified
            response.fileID = propstatProperties.fileID ?? response.fileID
            currentResponse = response
        case "response":
            if let response = currentResponse {
                if response.href.isEmpty {
                    problem = "a response in the PROPFIND answer has no href"
                    parser.abortParsing()
                } else {
                    entries.append(response)
                }
            }
            currentResponse = nil
        default: break
        }
    }

    /// Whether the element being read is inside a `DAV:` element named `name`.
    private func isInside(_ name: String) -> Bool {
        path.dropLast().contains { $0.namespace == WebDAVMultistatus.davNamespace && $0.name == name }
    }
}
