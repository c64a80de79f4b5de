// ACLs in zookeeper-client's terms and back, written against the crate's API alone, named `zk`:
// RealZk's body (over_the_api.rs) includes it, and so does the drop-in zookeeper-client, whose
// ACL types are the real crate's.

use zklab_recipes::acl::{Acl, Id, Perms};

/// Each permission bit, zklab's beside the crate's (which hides its bits). A bit beyond these
/// five, which a server stores as given, the crate can neither send nor read: it is dropped.
const PERMISSIONS: [(Perms, zk::Permission); 5] = [
    (Perms::READ, zk::Permission::READ),
    (Perms::WRITE, zk::Permission::WRITE),
    (Perms::CREATE, zk::Permission::CREATE),
    (Perms::DELETE, zk::Permission::DELETE),
    (Perms::ADMIN, zk::Permission::ADMIN),
];

/// An ACL as the crate sends it.
pub(crate) fn zk_acls(acl: &zklab_recipes::acl::Acls) -> Vec<zk::Acl> {
    let entry = |acl: &Acl| {
        let granted = PERMISSIONS.iter().filter(|(ours, _)| acl.perms.grants_any(*ours));
        let permission = granted.fold(zk::Permission::NONE, |all, (_, theirs)| all | *theirs);
        zk::Acl::new(permission, zk::AuthId::new(&acl.id.scheme, &acl.id.id))
    };
    acl.entries().iter().map(entry).collect()
}

/// An ACL in the crate's terms, in zklab's.
pub(crate) fn acls_of(acl: &[zk::Acl]) -> zklab_recipes::acl::Acls {
    let entry = |acl: &zk::Acl| {
        let granted = PERMISSIONS.iter().filter(|(_, theirs)| acl.permission().has(*theirs));
        let perms = granted.fold(Perms(0), |all, (ours, _)| Perms(all.0 | ours.0));
        Acl::new(perms, Id::new(acl.scheme(), acl.id()))
    };
    zklab_recipes::acl::Acls::new(acl.iter().map(entry).collect())
}
