import SyncAgent
import Testing

@Suite struct RemotePathTests {
    @Test(arguments: ["", "a", "a/b", "Documents/x y.txt"])
    func validPathsRoundTrip(_ text: String) throws {
        let path = try #require(RemotePath(text))
        #expect(path.description == text)
    }

    @Test(arguments: ["/a", "a//b", "a/./b", "../a", "a/..", "a/"])
    func escapingOrEmptyComponentsAreRefused(_ text: String) {
        #expect(RemotePath(text) == nil)
    }

    @Test func weakAndUnquotedTagsAreNormalised() throws {
        let weak = try #require(RemoteTag(parsing: "W/\"8-660eac5a037ca\""))
        #expect(weak.isWeak && weak.value == "\"8-660eac5a037ca\"")
        let bare = try #require(RemoteTag(parsing: "16335543-1795411451-8"))
        #expect(!bare.isWeak && bare.value == "\"16335543-1795411451-8\"")
    }
}
