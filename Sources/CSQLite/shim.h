// The system SQLite, which every Swift-on-Linux install already carries (SwiftPM itself links it);
// the headers come from libsqlite3-dev. Used by ManagedDocuments' local record store.
#include <sqlite3.h>
