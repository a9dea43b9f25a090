import Foundation

/// The `config.xml` of one instance of a ``SyncthingPair``, written by hand before its first start
/// (as `../shared/peers/syncthing-pair.sh` does): GUI/REST and sync listener on 127.0.0.1 only;
/// discovery, relays, NAT, usage and crash reports and upgrades off; the one shared folder and the
/// peer device configured in advance, so nothing needs to be accepted.
struct SyncthingConfig {
    var deviceID: String
    var deviceName: String
    var peerID: String
    var peerName: String
    /// `tcp://127.0.0.1:PORT` for the side that dials, `dynamic` for the one that only listens.
    /// Only one side may dial: two simultaneous dials become one TCP simultaneous open whose
    /// handshake times out, and the pair connects ~20 s later.
    var peerAddress: String
    var listenPort: UInt16
    var guiPort: UInt16
    var apiKey: String
    var folderID: String
    var folderPath: String
    /// Periodic full rescans; the tests ask for scans themselves (`POST /rest/db/scan`).
    var rescanIntervalS = 3600
    /// The file-system watcher's aggregation delay (Syncthing's default is 10 s).
    var watcherDelayS = 1
    /// How often an unconnected device is dialled again (Syncthing's default is 60 s).
    var reconnectionIntervalS = 1

    var xml: String {
        """
        <configuration version="36">
            <folder id="\(escaped(folderID))" label="\(escaped(folderID))" path="\(escaped(folderPath))" type="sendreceive" rescanIntervalS="\(rescanIntervalS)" fsWatcherEnabled="true" fsWatcherDelayS="\(watcherDelayS)" ignorePerms="false" autoNormalize="true">
                <filesystemType>basic</filesystemType>
                <device id="\(deviceID)" introducedBy=""></device>
                <device id="\(peerID)" introducedBy=""></device>
                <minDiskFree unit="%">0</minDiskFree>
                <maxConflicts>10</maxConflicts>
                <markerName>.stfolder</markerName>
            </folder>
            <device id="\(deviceID)" name="\(deviceName)" compression="metadata" introducer="false">
                <address>dynamic</address>
                <paused>false</paused>
            </device>
            <device id="\(peerID)" name="\(peerName)" compression="metadata" introducer="false">
                <address>\(peerAddress)</address>
                <paused>false</paused>
                <autoAcceptFolders>false</autoAcceptFolders>
            </device>
            <gui enabled="true" tls="false" debugging="false">
                <address>127.0.0.1:\(guiPort)</address>
                <apikey>\(apiKey)</apikey>
            </gui>
            <options>
                <listenAddress>tcp://127.0.0.1:\(listenPort)</listenAddress>
                <globalAnnounceEnabled>false</globalAnnounceEnabled>
                <localAnnounceEnabled>false</localAnnounceEnabled>
                <relaysEnabled>false</relaysEnabled>
                <natEnabled>false</natEnabled>
                <stunKeepaliveStartS>0</stunKeepaliveStartS>
                <stunKeepaliveMinS>0</stunKeepaliveMinS>
                <announceLANAddresses>false</announceLANAddresses>
                <reconnectionIntervalS>\(reconnectionIntervalS)</reconnectionIntervalS>
                <startBrowser>false</startBrowser>
                <urAccepted>-1</urAccepted>
                <autoUpgradeIntervalH>0</autoUpgradeIntervalH>
                <crashReportingEnabled>false</crashReportingEnabled>
                <setLowPriority>false</setLowPriority>
                <minHomeDiskFree unit="%">0</minHomeDiskFree>
            </options>
        </configuration>

        """
    }

    private func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
