import Foundation
import Glibc

/// The configuration of a private Apache mod_dav server on 127.0.0.1 (own ServerRoot, PidFile, logs
/// and lock database; the 503 switch: a flag file `WORK/unavailable`).
package enum WebDAVApacheConfig {
    package static let moduleDirectory = "/usr/lib/apache2/modules"
    /// The user Apache's workers run as when the tests run as root (Apache refuses root).
    package static let workerUser = "www-data"

    /// Writes `httpd.conf` (and the folders it names) into `work`; returns its URL. As root, `data`
    /// and the lock folder are given to ``workerUser`` and `work` is made traversable, so the
    /// workers can serve, lock and test the 503 flag file.
    /// The default access-log format: the request and its conditions.
    package static let conditionsLogFormat = #"%h %t "%r" %>s %b "%{If-Match}i" "%{If-None-Match}i""#

    /// `logFormat` is the access log's format; `extraDirectives` are added to the server's
    /// configuration (e.g. `LimitRequestBody 0` for large uploads).
    package static func write(work: URL, data: URL, port: UInt16, fileETag: String,
                              logFormat: String = conditionsLogFormat, extraDirectives: [String] = []) throws -> URL {
        for name in ["run", "lock", "logs"] {
            try FileManager.default.createDirectory(at: work.appendingPathComponent(name), withIntermediateDirectories: true)
        }
        var userLines = ""
        if geteuid() == 0 {
            guard let entry = getpwnam(workerUser) else {
                throw LocalServerError( "the user \(workerUser) Apache's workers run as does not exist")
            }
            let (uid, gid) = (entry.pointee.pw_uid, entry.pointee.pw_gid)
            userLines = "User \(workerUser)\nGroup #\(gid)"
            chmod(work.path, 0o755)
            try chownTree(data.path, uid, gid)
            try chownTree(work.appendingPathComponent("lock").path, uid, gid)
        }
        let flag = work.appendingPathComponent("unavailable").path
        let text = """
            ServerRoot "\(work.path)"
            DefaultRuntimeDir "\(work.path)/run"
            PidFile "\(work.path)/run/httpd.pid"
            ErrorLog "\(work.path)/logs/error.log"
            LogLevel warn
            Listen 127.0.0.1:\(port)
            ServerName 127.0.0.1
            \(userLines)
            LoadModule mpm_event_module \(moduleDirectory)/mod_mpm_event.so
            LoadModule authz_core_module \(moduleDirectory)/mod_authz_core.so
            LoadModule mime_module \(moduleDirectory)/mod_mime.so
            LoadModule dav_module \(moduleDirectory)/mod_dav.so
            LoadModule dav_fs_module \(moduleDirectory)/mod_dav_fs.so
            LoadModule rewrite_module \(moduleDirectory)/mod_rewrite.so
            LoadModule headers_module \(moduleDirectory)/mod_headers.so
            StartServers 1
            ServerLimit 2
            ThreadsPerChild 16
            MaxRequestWorkers 32
            TypesConfig /etc/mime.types
            LogFormat "\(logFormat.replacingOccurrences(of: "\"", with: "\\\""))" dav
            CustomLog "\(work.path)/logs/access.log" dav
            DavLockDB "\(work.path)/lock/DavLock"
            FileETag \(fileETag)
            \(extraDirectives.joined(separator: "\n"))
            DocumentRoot "\(data.path)"
            # The 503 switch: while the flag file exists, every request is answered 503.
            RewriteEngine On
            RewriteCond "\(flag)" -f
            RewriteRule "^" "-" [R=503,L]
            Header always set Retry-After "7" "expr=%{REQUEST_STATUS} == 503"
            <Directory />
                AllowOverride None
                Require all denied
            </Directory>
            <Directory "\(data.path)">
                DAV On
                Options None
                AllowOverride None
                Require all granted
            </Directory>

            """
        let url = work.appendingPathComponent("httpd.conf")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    /// `chown -R` with plain C calls (nothing here follows symlinks: `lchown`).
    private static func chownTree(_ path: String, _ uid: uid_t, _ gid: gid_t) throws {
        guard lchown(path, uid, gid) == 0 else { throw LocalServerError( "chown \(path): errno \(errno)") }
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return }
        while let relative = enumerator.nextObject() as? String {
            lchown(path + "/" + relative, uid, gid)
        }
    }
}

/// The configuration of a private WsgiDAV on 127.0.0.1 (anonymous read/write, locks, properties).
package enum WebDAVWsgiDAVConfig {
    package static func text(data: URL, port: UInt16) -> String {
        """
        host: 127.0.0.1
        port: \(port)
        server: cheroot
        provider_mapping:
          "/": "\(data.path)"
        http_authenticator:
          domain_controller: null
          accept_basic: true
          accept_digest: false
          default_to_digest: false
        simple_dc:
          user_mapping:
            "*": true
        property_manager: true
        lock_storage: true
        dir_browser:
          enable: false
        verbose: 2

        """
    }
}
