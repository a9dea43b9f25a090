// Ubiquity: the iCloud half of Apple's document model on Linux — ubiquity containers kept in
// sync by a sync tool (Syncthing, Nextcloud, Dropbox, rclone) or this package's sync agent,
// moving documents to and from the cloud, live metadata queries and the key-value store.
//
// `import Ubiquity` also imports CloudDocuments (and so FileCoordination): ubiquity is about
// documents, and every API here hands back URLs that documents and coordinators take.
@_exported import CloudDocuments
