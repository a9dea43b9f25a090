// swift-tools-version: 6.0
//
// CloudDocuments: Apple's document / file-presenter / file-coordinator model for Linux.
// No package dependencies: only what the Swift toolchain ships, plus the system zlib
// (used by the example image document's PNG codec only).
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "CloudDocuments",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "FileCoordination", targets: ["FileCoordination"]),
        .library(name: "CloudDocuments", targets: ["CloudDocuments"]),
        .library(name: "FoundationCompatibility", targets: ["FoundationCompatibility"]),
        .library(name: "Ubiquity", targets: ["Ubiquity"]),
        .library(name: "SyncAgent", targets: ["SyncAgent"]),
        .library(name: "ExampleDocuments", targets: ["ExampleDocuments"]),
        .executable(name: "clouddocsd", targets: ["clouddocsd"]),
        .executable(name: "clouddocs-demo", targets: ["clouddocs-demo"]),
        .executable(name: "text-editor", targets: ["text-editor"]),
        .executable(name: "image-tool", targets: ["image-tool"]),
        .executable(name: "clouddocs", targets: ["clouddocs"]),
        .executable(name: "key-value-benchmark", targets: ["key-value-benchmark"]),
        .executable(name: "coordination-benchmark", targets: ["coordination-benchmark"]),
        .executable(name: "document-benchmark", targets: ["document-benchmark"]),
        .executable(name: "versions-benchmark", targets: ["versions-benchmark"]),
        .executable(name: "metadata-query-benchmark", targets: ["metadata-query-benchmark"]),
        .executable(name: "coordination-soak", targets: ["coordination-soak"]),
        .executable(name: "sync-benchmark", targets: ["sync-benchmark"]),
        .executable(name: "sync-demo", targets: ["sync-demo"]),
        .library(name: "ManagedDocuments", targets: ["ManagedDocuments"]),
        .executable(name: "todo", targets: ["todo"]),
        .executable(name: "managed-document-benchmark", targets: ["managed-document-benchmark"]),
    ],
    targets: [
        // MARK: Library
        // C declarations of the Linux calls and constants Swift's Glibc module leaves out (statx,
        // getdents64, renameat2, accept4, F_OFD_*, CMSG_*, xattrs, …). Package-internal: not a product.
        .target(name: "CSystemShim"),
        // The system layer both modules share (errno values, system-call errors, descriptors,
        // byte paths, file identity). Package-internal: not a product.
        .target(name: "SystemSupport", dependencies: ["CSystemShim"], swiftSettings: strict),
        .target(name: "FileCoordination", dependencies: ["SystemSupport", "CSystemShim"], swiftSettings: strict),
        .target(name: "CloudDocuments", dependencies: ["FileCoordination", "SystemSupport", "CSystemShim"],
                swiftSettings: strict),
        // Containers, metadata queries and the key-value store (the iCloud half of the model).
        .target(name: "Ubiquity", dependencies: ["CloudDocuments", "FileCoordination", "SystemSupport", "CSystemShim"],
                swiftSettings: strict),
        // Apple's names (NSFileCoordinator, NSFilePresenter, …) over FileCoordination; opt-in.
        .target(name: "FoundationCompatibility", dependencies: ["FileCoordination", "CloudDocuments", "Ubiquity"],
                swiftSettings: strict),
        // The sync agent (`clouddocsd`): containers synced with WebDAV servers, taking part in
        // coordination like Apple's daemon. HTTP through FoundationNetworking (ships with the toolchain).
        .target(name: "SyncAgent", dependencies: ["Ubiquity", "CloudDocuments", "FileCoordination", "SystemSupport", "CSystemShim"],
                swiftSettings: strict),
        .executableTarget(name: "clouddocsd", dependencies: ["SyncAgent"], exclude: ["clouddocsd.service"], swiftSettings: strict),

        // Private servers on 127.0.0.1 (Apache mod_dav, WsgiDAV, rclone serve) for the tests, the
        // sync benchmark and the sync demo. Package-internal: not a product.
        .target(name: "LocalServers", dependencies: ["CSystemShim"], swiftSettings: strict),

        // The system SQLite (every Swift-on-Linux install links it; headers from libsqlite3-dev).
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
                       providers: [.apt(["libsqlite3-dev"])]),
        // ManagedDocument (UIManagedDocument): a local SQLite record store whose change logs merge
        // record by record through the ubiquity container's data scope.
        .target(name: "ManagedDocuments", dependencies: ["CloudDocuments", "Ubiquity", "FoundationCompatibility", "CSQLite", "SystemSupport"],
                swiftSettings: strict),

        // MARK: Examples
        .systemLibrary(name: "CZlib", path: "Examples/CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"])]),
        .target(name: "ExampleDocuments", dependencies: ["CloudDocuments", "CZlib"],
                path: "Examples/ExampleDocuments", swiftSettings: strict),
        .executableTarget(name: "clouddocs-demo", dependencies: ["ExampleDocuments", "Ubiquity"],
                          path: "Examples/clouddocs-demo", swiftSettings: strict),
        .executableTarget(name: "text-editor", dependencies: ["ExampleDocuments", "Ubiquity"],
                          path: "Examples/text-editor", swiftSettings: strict),
        .executableTarget(name: "image-tool", dependencies: ["ExampleDocuments", "Ubiquity"],
                          path: "Examples/image-tool", swiftSettings: strict),
        .executableTarget(name: "clouddocs", dependencies: ["Ubiquity"],
                          path: "Examples/clouddocs", swiftSettings: strict),
        // Two devices syncing through a local Apache WebDAV server with two clouddocsd agents.
        .executableTarget(name: "sync-demo", dependencies: ["SyncAgent", "ExampleDocuments", "LocalServers"],
                          path: "Examples/sync-demo", swiftSettings: strict),

        // The book's to-do list on a ManagedDocument, shared by two devices through a synced folder.
        .executableTarget(name: "todo", dependencies: ["ManagedDocuments", "FoundationCompatibility"],
                          path: "Examples/todo", swiftSettings: strict),

        // MARK: Benchmarks (run with `swift run -c release <name>`)
        .executableTarget(name: "coordination-benchmark", dependencies: ["FileCoordination", "BenchmarkSupport"],
                          swiftSettings: strict),
        .target(name: "BenchmarkSupport", dependencies: ["CloudDocuments", "SystemSupport"], swiftSettings: strict),
        .executableTarget(name: "key-value-benchmark", dependencies: ["Ubiquity", "BenchmarkSupport", "SystemSupport"], swiftSettings: strict),
        .executableTarget(name: "document-benchmark", dependencies: ["CloudDocuments", "ExampleDocuments", "BenchmarkSupport", "CSystemShim"],
                          swiftSettings: strict),
        .executableTarget(name: "versions-benchmark", dependencies: ["CloudDocuments", "BenchmarkSupport", "CSystemShim"],
                          swiftSettings: strict),
        .executableTarget(name: "metadata-query-benchmark", dependencies: ["Ubiquity", "BenchmarkSupport", "CSystemShim"], swiftSettings: strict),
        .executableTarget(name: "sync-benchmark", dependencies: ["SyncAgent", "BenchmarkSupport", "SystemSupport", "LocalServers"],
                          swiftSettings: strict),
        .executableTarget(name: "managed-document-benchmark", dependencies: ["ManagedDocuments", "FoundationCompatibility", "CSQLite"], swiftSettings: strict),
        .executableTarget(name: "coordination-soak", dependencies: ["FileCoordination", "CloudDocuments", "ExampleDocuments", "SystemSupport", "BenchmarkSupport"], swiftSettings: strict),

        // MARK: Tests
        .executableTarget(name: "CoordinationTestHelper", dependencies: ["FileCoordination", "CloudDocuments", "ExampleDocuments", "TestSupport", "CSystemShim"],
                          path: "Tests/CoordinationTestHelper", swiftSettings: strict),
        .target(name: "TestSupport", dependencies: ["FileCoordination", "SystemSupport", "CSystemShim", "LocalServers"], path: "Tests/TestSupport", swiftSettings: strict),
        .testTarget(name: "FileCoordinationTests",
                    dependencies: ["FileCoordination", "CloudDocuments", "SystemSupport", "TestSupport", "CoordinationTestHelper"],
                    swiftSettings: strict),
        .testTarget(name: "CloudDocumentsTests",
                    dependencies: ["CloudDocuments", "SystemSupport", "TestSupport", "CoordinationTestHelper"],
                    swiftSettings: strict),
        .testTarget(name: "FoundationCompatibilityTests",
                    dependencies: ["FoundationCompatibility", "FileCoordination", "CloudDocuments", "TestSupport"], swiftSettings: strict),
        .executableTarget(name: "UbiquityTestHelper", dependencies: ["Ubiquity", "TestSupport"],
                          path: "Tests/UbiquityTestHelper", swiftSettings: strict),
        .testTarget(name: "UbiquityTests",
                    dependencies: ["Ubiquity", "FoundationCompatibility", "SystemSupport", "TestSupport", "UbiquityTestHelper", "clouddocs"],
                    swiftSettings: strict),
        .testTarget(name: "SyncAgentTests",
                    dependencies: ["SyncAgent", "Ubiquity", "CloudDocuments", "SystemSupport", "TestSupport", "LocalServers", "clouddocsd", "clouddocs", "sync-demo", "text-editor",
                                   "CoordinationTestHelper", "UbiquityTestHelper"],
                    swiftSettings: strict),
        .testTarget(name: "ExampleDocumentsTests", dependencies: ["ExampleDocuments", "TestSupport", "text-editor", "image-tool", "clouddocs-demo"],
                    resources: [.copy("Fixtures")], swiftSettings: strict),
        .executableTarget(name: "ManagedDocumentTestHelper", dependencies: ["ManagedDocuments", "FoundationCompatibility"],
                          path: "Tests/ManagedDocumentTestHelper", swiftSettings: strict),
        .testTarget(name: "ManagedDocumentTests",
                    dependencies: ["ManagedDocuments", "FoundationCompatibility", "Ubiquity", "CloudDocuments", "TestSupport", "todo", "ManagedDocumentTestHelper"],
                    swiftSettings: strict),
    ]
)
