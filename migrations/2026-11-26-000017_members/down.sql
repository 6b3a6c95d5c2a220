DROP TABLE invitations;
DROP TABLE memberships;
DROP TABLE members;
